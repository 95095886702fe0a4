// JSON forms of the profile's descriptive sections (metadata, event descriptors). They are small
// and change often between versions, so a self-describing encoding is worth its bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

nlohmann::json MetadataToJson(const Metadata& metadata);
Result<Metadata> MetadataFromJson(const nlohmann::json& json);

nlohmann::json EventsToJson(const std::vector<EventDesc>& events);
Result<std::vector<EventDesc>> EventsFromJson(const nlohmann::json& json);

}  // namespace tprof
