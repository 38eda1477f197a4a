// Names the calling thread, as `top -H`, `ps -L` and profilers show it. Linux keeps at most 15
// characters; longer names are cut.
#pragma once

#include <string_view>

namespace kt::core {

void NameThisThread(std::string_view name);

}  // namespace kt::core
