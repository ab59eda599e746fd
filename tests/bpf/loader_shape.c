// SPDX-License-Identifier: GPL-2.0
/* Loader tests: the shape the loader_shape_*.c variants differ from. */
#include "loader_shape.h"
