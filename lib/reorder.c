/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/reorder.h"
