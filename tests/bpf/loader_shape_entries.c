// SPDX-License-Identifier: GPL-2.0
/* Loader tests: loader_shape with more entries. */
#define SHAPE_ENTRIES (2 * RENAME_COUNT_ENTRIES)
#include "loader_shape.h"
