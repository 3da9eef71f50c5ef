# Third-party libraries, all from the distribution: zstd, libcbor, libelf.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(CBOR REQUIRED IMPORTED_TARGET libcbor)
pkg_check_modules(ELF REQUIRED IMPORTED_TARGET libelf)
# Converters (convert/): pprof's profile.proto through protobuf-c, gzip through
# zlib.  protoc-c generates the C code of convert/profile.proto at build time.
pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
find_program(VMP_PROTOC_C NAMES protoc-c REQUIRED)
# The vmp command: `vmp archive` keeps its index in an SQLite file or on a
# PostgreSQL server (libpq) and names profiles by their SHA-256 (libcrypto).
if(VMP_BUILD_CLI)
  pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
  pkg_check_modules(LIBCRYPTO REQUIRED IMPORTED_TARGET libcrypto)
  # `vmp archive` on a PostgreSQL server, which many machines share
  pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
endif()
