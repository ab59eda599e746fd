// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_shape with another map type. */
#define SHAPE_TYPE LRU_HASH
#include "loader_shape.h"
