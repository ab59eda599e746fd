// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_shape with a wider key. */
#define SHAPE_WIDE_KEY
#include "loader_shape.h"
