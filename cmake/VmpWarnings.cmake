# One INTERFACE target carries the project's warning flags.
add_library(vmp_warnings INTERFACE)
target_compile_options(vmp_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -Wformat=2 -Wundef -Wvla -Wcast-align)
if(VMP_WERROR)
  target_compile_options(vmp_warnings INTERFACE -Werror)
endif()
