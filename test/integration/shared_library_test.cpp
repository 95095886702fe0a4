// Libraries opened when first used (core/base/shared_library.h): what a missing library or function
// says, and that tprof starts without capstone and libpfm4, which it opens only to disassemble
// and to encode vendor event names.
#include "core/base/shared_library.h"

#include <gtest/gtest.h>

#include <string>

#include "symbolize/disassembler.h"
#include "test/support/run_command.h"

namespace tprof {
namespace {

TEST(SharedLibrary, MissingLibraryAndFunctionAreNamed) {
  auto missing = SharedLibrary::Open("libtprof-no-such-library.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("cannot load libtprof-no-such-library.so.1"),
            std::string::npos)
      << missing.error().message();

  auto libm = SharedLibrary::Open("libm.so.6");
  ASSERT_TRUE(libm.ok()) << libm.error().message();
  auto nothing = libm->Function<void (*)()>("tprof_no_such_function");
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().message(), "libm.so.6 has no tprof_no_such_function");
  auto cosine = libm->Function<double (*)(double)>("cos");
  ASSERT_TRUE(cosine.ok()) << cosine.error().message();
  EXPECT_EQ((*cosine)(0.0), 1.0);
}

// The dynamic loader lists every library it maps (LD_DEBUG=files): a command that neither
// disassembles nor names vendor events maps neither library.
TEST(SharedLibrary, TprofStartsWithoutCapstoneOrLibpfm) {
  auto run = testing::RunCommand({"/usr/bin/env", "LD_DEBUG=files", TPROF_BINARY, "--version"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string loaded = run.out + run.err;
  EXPECT_NE(loaded.find("libdw.so"), std::string::npos) << "LD_DEBUG printed no libraries";
  EXPECT_EQ(loaded.find("libcapstone"), std::string::npos);
  EXPECT_EQ(loaded.find("libpfm"), std::string::npos);

  // And capstone is there when asked for.
  auto disassembler = Disassembler::Create(Architecture::kX86_64);
  ASSERT_TRUE(disassembler.ok()) << disassembler.error().message();
  const std::string nop_ret("\x90\xc3", 2);
  auto instructions = disassembler->Decode(nop_ret, 0x1000);
  ASSERT_EQ(instructions.size(), 2u);
  EXPECT_EQ(instructions[0].mnemonic, "nop");
  EXPECT_EQ(instructions[1].mnemonic, "ret");
}

}  // namespace
}  // namespace tprof
