#pragma once

inline int lowValue() { return 1; }
