// SPDX-License-Identifier: GPL-2.0
/* bpfprogs/kswapd.c on the test's clock (test_clock.h). */
#include "test_clock.h"
#include "../../bpfprogs/kswapd.c"
