// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_shape with a wider value. */
#define SHAPE_WIDE_VALUE
#include "loader_shape.h"
