#pragma once

#include "core/low/low.h"

inline int highValue() { return lowValue() + 1; }
