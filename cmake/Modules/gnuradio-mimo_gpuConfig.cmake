find_package(PkgConfig)

PKG_CHECK_MODULES(PC_GR_MIMO_GPU gnuradio-mimo_gpu)

FIND_PATH(
    GR_MIMO_GPU_INCLUDE_DIRS
    NAMES gnuradio/mimo_gpu/api.h
    HINTS $ENV{MIMO_GPU_DIR}/include
        ${PC_MIMO_GPU_INCLUDEDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/include
          /usr/local/include
          /usr/include
)

FIND_LIBRARY(
    GR_MIMO_GPU_LIBRARIES
    NAMES gnuradio-mimo_gpu
    HINTS $ENV{MIMO_GPU_DIR}/lib
        ${PC_MIMO_GPU_LIBDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/lib
          ${CMAKE_INSTALL_PREFIX}/lib64
          /usr/local/lib
          /usr/local/lib64
          /usr/lib
          /usr/lib64
          )

include("${CMAKE_CURRENT_LIST_DIR}/gnuradio-mimo_gpuTarget.cmake")

INCLUDE(FindPackageHandleStandardArgs)
FIND_PACKAGE_HANDLE_STANDARD_ARGS(GR_MIMO_GPU DEFAULT_MSG GR_MIMO_GPU_LIBRARIES GR_MIMO_GPU_INCLUDE_DIRS)
MARK_AS_ADVANCED(GR_MIMO_GPU_LIBRARIES GR_MIMO_GPU_INCLUDE_DIRS)
