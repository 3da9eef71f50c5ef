# Third-party libraries, all from the distribution: zstd, libcbor, libelf.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(CBOR REQUIRED IMPORTED_TARGET libcbor)
pkg_check_modules(ELF REQUIRED IMPORTED_TARGET libelf)
