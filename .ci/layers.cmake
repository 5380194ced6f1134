# The layer check. Each folder of kaja's sources is one library that declares the folder
# libraries it may include (kaja_folder_library in CMakeLists.txt). This check reads every
# `#include "core/…"`, `"personas/…"`, `"marketplace/…"`, `"sandbox/…"` and `"cli/…"` in each folder's .h
# and .cpp files and stops with one sentence per finding when a file includes a folder its
# library does not declare, or when the declarations form a cycle. CMake itself would link
# a cycle of static libraries without a word, so nothing else notices either.
#
# The layers file has one line per folder library, "name folder [dependency...]", with the
# folder relative to the source root; blank lines and lines starting with # are ignored.
#
# CMakeLists.txt includes this file and calls kaja_check_layers at configure time; the
# build runs it again (target kaja_layers) whenever a source changes. Alone:
#   cmake -DROOT=<source dir> -DLAYERS_FILE=<layers file> -P .ci/layers.cmake

cmake_policy(VERSION 3.25)

# Reads `layers_file` into: kaja_layer_names (in file order), kaja_layer_folder_<name>,
# kaja_layer_deps_<name> and kaja_layer_of_<folder>, all set in the caller's scope.
macro(kaja_read_layers layers_file)
  set(kaja_layer_names "")
  file(STRINGS "${layers_file}" kaja_layer_lines)
  foreach(kaja_layer_line IN LISTS kaja_layer_lines)
    if(kaja_layer_line MATCHES "^[ \t]*(#|$)")
      continue()
    endif()
    separate_arguments(kaja_layer_parts UNIX_COMMAND "${kaja_layer_line}")
    list(POP_FRONT kaja_layer_parts kaja_layer_name kaja_layer_folder)
    list(APPEND kaja_layer_names ${kaja_layer_name})
    set(kaja_layer_folder_${kaja_layer_name} "${kaja_layer_folder}")
    set(kaja_layer_deps_${kaja_layer_name} "${kaja_layer_parts}")
    set(kaja_layer_of_${kaja_layer_folder} ${kaja_layer_name})
  endforeach()
endmacro()

# Appends to `out_var` (a list of sentences) each include in `name`'s folder whose folder
# is not `name`'s own and not declared by it.
function(kaja_check_includes root name out_var)
  set(findings "${${out_var}}")
  set(folder "${kaja_layer_folder_${name}}")
  set(allowed "${kaja_layer_deps_${name}}")
  file(GLOB files LIST_DIRECTORIES false RELATIVE "${root}"
       "${root}/${folder}/*.h" "${root}/${folder}/*.cpp")
  set(include_regex "^[ \t]*#[ \t]*include[ \t]*\"((core|personas|marketplace|sandbox|cli)/[^\"]*)\"")
  foreach(file IN LISTS files)
    file(STRINGS "${root}/${file}" lines REGEX "${include_regex}")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "${include_regex}" _ "${line}")
      set(included "${CMAKE_MATCH_1}")
      get_filename_component(included_folder "${included}" DIRECTORY)
      set(target "${kaja_layer_of_${included_folder}}")
      if(target STREQUAL "")
        list(APPEND findings "${file} includes ${included} from ${included_folder}/, which is \
no folder library: declare it with kaja_folder_library in CMakeLists.txt.")
      elseif(NOT target STREQUAL name AND NOT target IN_LIST allowed)
        list(APPEND findings "${file} includes ${included} from ${included_folder}/, but \
${name} does not declare ${target}: add it to ${name}'s DEPENDS in CMakeLists.txt, or \
move the code so that the lower layer does not need the higher one.")
      endif()
    endforeach()
  endforeach()
  set(${out_var} "${findings}" PARENT_SCOPE)
endfunction()

# Appends to `out_var` a sentence naming one cycle among the declared dependencies, if any
# (Kahn's algorithm: what cannot be peeled off from the bottom lies on or above a cycle).
function(kaja_check_cycles out_var)
  set(findings "${${out_var}}")
  set(left "${kaja_layer_names}")
  set(progress TRUE)
  while(progress)
    set(progress FALSE)
    foreach(name IN LISTS left)
      set(blocked FALSE)
      foreach(dep IN LISTS kaja_layer_deps_${name})
        if(dep IN_LIST left)
          set(blocked TRUE)
          break()
        endif()
      endforeach()
      if(NOT blocked)
        list(REMOVE_ITEM left ${name})
        set(progress TRUE)
      endif()
    endforeach()
  endwhile()
  if(left)
    # Every library left has a dependency still left: walk them until one repeats.
    list(GET left 0 name)
    set(path "")
    while(NOT name IN_LIST path)
      list(APPEND path ${name})
      foreach(dep IN LISTS kaja_layer_deps_${name})
        if(dep IN_LIST left)
          set(name ${dep})
          break()
        endif()
      endforeach()
    endwhile()
    list(FIND path ${name} start)
    list(SUBLIST path ${start} -1 cycle)
    list(APPEND cycle ${name})
    list(JOIN cycle " -> " shown)
    list(APPEND findings "The folder libraries depend on each other in a cycle (${shown}): \
move the code so that one of them no longer needs the other, then drop that DEPENDS entry.")
  endif()
  set(${out_var} "${findings}" PARENT_SCOPE)
endfunction()

# Checks the layers in `layers_file` against the sources under `root`; a finding is a
# FATAL_ERROR listing every one.
function(kaja_check_layers root layers_file)
  kaja_read_layers("${layers_file}")
  set(findings "")
  foreach(name IN LISTS kaja_layer_names)
    foreach(dep IN LISTS kaja_layer_deps_${name})
      if(NOT dep IN_LIST kaja_layer_names)
        list(APPEND findings "${name} depends on ${dep}, which is no folder library: declare \
it with kaja_folder_library in CMakeLists.txt or drop it from ${name}'s DEPENDS.")
      endif()
    endforeach()
    kaja_check_includes("${root}" ${name} findings)
  endforeach()
  kaja_check_cycles(findings)
  if(findings)
    # Indented lines are printed as they are, one finding a line, not rewrapped.
    list(JOIN findings "\n  " shown)
    message(FATAL_ERROR "Layer check failed:\n  ${shown}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT DEFINED ROOT OR NOT DEFINED LAYERS_FILE)
    message(FATAL_ERROR "Give the source root and the layers file: \
cmake -DROOT=<dir> -DLAYERS_FILE=<file> -P .ci/layers.cmake")
  endif()
  get_filename_component(root "${ROOT}" ABSOLUTE)
  kaja_check_layers("${root}" "${LAYERS_FILE}")
endif()
