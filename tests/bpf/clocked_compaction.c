// SPDX-License-Identifier: GPL-2.0
/* bpfprogs/compaction.c on the test's clock (test_clock.h). */
#include "test_clock.h"
#include "../../bpfprogs/compaction.c"
