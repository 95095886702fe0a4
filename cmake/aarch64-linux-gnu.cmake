# Cross-compiles tprof for arm64 with Debian's cross compiler and the :arm64 -dev packages
# (dpkg --add-architecture arm64; scripts/setup.sh --armlab installs both).
#   cmake -S . -B build/arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Debian's multiarch layout: the arm64 libraries live beside the host's under /usr/lib/<triplet>,
# and the headers are shared; only the target's libraries and package files may be found.
set(CMAKE_FIND_ROOT_PATH /usr/lib/aarch64-linux-gnu /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# BOTH, not ONLY: the :arm64 libraries are found on the host's own paths through
# CMAKE_LIBRARY_ARCHITECTURE (/usr/lib/aarch64-linux-gnu); the host's live in x86_64-linux-gnu,
# which an aarch64 search never looks in.
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
