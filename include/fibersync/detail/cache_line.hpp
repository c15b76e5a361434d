// cache_line.hpp: the cache-line size used for padding against false sharing.
#pragma once

#include <cstddef>

namespace fibersync::detail {

// 64 bytes on x86-64 and most Arm cores. std::hardware_destructive_interference_size
// is avoided because GCC warns that its value may differ between translation
// units compiled with different -mtune flags (an ABI hazard for a header-only
// library); adjacent-line prefetch makes 128 the safer choice on Intel.
inline constexpr std::size_t cache_line_size = 128;

}  // namespace fibersync::detail
