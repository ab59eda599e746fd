// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_shape with other map flags. */
#define SHAPE_FLAGS BPF_F_NO_PREALLOC
#include "loader_shape.h"
