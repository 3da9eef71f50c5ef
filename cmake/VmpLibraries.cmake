# The installed libraries, assembled from the layers' object libraries:
#   libvmp-writer  format + writer                 (what a VM links)
#   libvmp         format + reader + analyze + convert (what tools link)
#   libvmp-archive archive (on libvmp, SQLite, libcrypto; archive/CMakeLists.txt,
#                  built with the vmp command)
# each shared and static, with a pkg-config file and the exported CMake
# package vmp (find_package(vmp) gives vmp::writer, vmp::vmp and their
# _static twins).

set(VMP_LIBVMP_OBJS vmp_format_obj vmp_reader_obj)
foreach(layer vmp_analyze_obj vmp_convert_obj)
  if(TARGET ${layer})
    list(APPEND VMP_LIBVMP_OBJS ${layer})
  endif()
endforeach()
# `vmp import` (convert/vmp_import_pprof.c) writes vmp files: the converters
# need the writer's objects in libvmp too.
if(TARGET vmp_convert_obj)
  list(APPEND VMP_LIBVMP_OBJS vmp_writer_obj)
endif()

function(vmp_add_library name output objs private_deps)
  set(sources "")
  foreach(o ${objs})
    list(APPEND sources $<TARGET_OBJECTS:${o}>)
  endforeach()
  add_library(${name} SHARED ${sources})
  add_library(${name}_static STATIC ${sources})
  set_target_properties(${name} PROPERTIES OUTPUT_NAME ${output}
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
  set_target_properties(${name}_static PROPERTIES OUTPUT_NAME ${output})
  foreach(t ${name} ${name}_static)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/format>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/vmp>)
    foreach(o ${objs})
      target_include_directories(${t} PUBLIC $<BUILD_INTERFACE:$<TARGET_PROPERTY:${o},SOURCE_DIR>>)
    endforeach()
  endforeach()
  target_link_libraries(${name} PRIVATE ${private_deps})
  # A static archive carries its dependencies to its consumers.
  target_link_libraries(${name}_static PUBLIC ${private_deps})
  target_compile_definitions(${name}_static INTERFACE VMP_STATIC_DEFINE)
endfunction()

vmp_add_library(vmp_writer_lib vmp-writer "vmp_format_obj;vmp_writer_obj"
  "PkgConfig::ZSTD;PkgConfig::CBOR;PkgConfig::ELF;Threads::Threads")
vmp_add_library(vmp_lib vmp "${VMP_LIBVMP_OBJS}"
  "PkgConfig::ZSTD;PkgConfig::CBOR;PkgConfig::ELF;PkgConfig::PROTOBUFC;PkgConfig::ZLIB;Threads::Threads;m;stdc++")
# The writer is linked into VMs that sample from signal handlers: bind every
# symbol at load time so that no lazy PLT resolution runs in a handler.
target_link_options(vmp_writer_lib PRIVATE -Wl,-z,now)

add_library(vmp::writer ALIAS vmp_writer_lib)
add_library(vmp::writer_static ALIAS vmp_writer_lib_static)
add_library(vmp::vmp ALIAS vmp_lib)
add_library(vmp::vmp_static ALIAS vmp_lib_static)
set_target_properties(vmp_writer_lib vmp_writer_lib_static PROPERTIES EXPORT_NAME writer)
set_target_properties(vmp_writer_lib_static PROPERTIES EXPORT_NAME writer_static)
set_target_properties(vmp_lib PROPERTIES EXPORT_NAME vmp)
set_target_properties(vmp_lib_static PROPERTIES EXPORT_NAME vmp_static)

# ---- install ---------------------------------------------------------------
include(CMakePackageConfigHelpers)
install(TARGETS vmp_writer_lib vmp_writer_lib_static vmp_lib vmp_lib_static
  EXPORT vmpTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
file(GLOB VMP_PUBLIC_HEADERS
  ${PROJECT_SOURCE_DIR}/format/vmp_status.h ${PROJECT_SOURCE_DIR}/format/vmp_format.h
  ${PROJECT_SOURCE_DIR}/writer/vmp_writer.h ${PROJECT_SOURCE_DIR}/reader/vmp_reader.h
  ${PROJECT_SOURCE_DIR}/analyze/vmp_analyze.h ${PROJECT_SOURCE_DIR}/convert/vmp_convert.h
  ${PROJECT_SOURCE_DIR}/format/vmp_record.h ${PROJECT_SOURCE_DIR}/analyze/vmp_record_writer.h
  ${PROJECT_SOURCE_DIR}/analyze/vmp_rewrite.h)
install(FILES ${VMP_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vmp)
install(EXPORT vmpTargets NAMESPACE vmp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vmp)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vmpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vmpConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vmp)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vmpConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vmpConfig.cmake ${PROJECT_BINARY_DIR}/vmpConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vmp)
# The pkg-config files locate the prefix relative to themselves, so that an
# install staged elsewhere (`cmake --install --prefix DIR`) still resolves.
file(RELATIVE_PATH VMP_PC_RELPREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
foreach(pc vmp vmp-writer)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
