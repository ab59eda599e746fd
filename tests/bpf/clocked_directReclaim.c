// SPDX-License-Identifier: GPL-2.0
/* bpfprogs/directReclaim.c on the test's clock (test_clock.h). */
#include "test_clock.h"
#include "../../bpfprogs/directReclaim.c"
