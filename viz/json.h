// JSON of capture events: the --events file holds one object per line.
#pragma once
#include <string>

#include "core/capture/log.h"

namespace dyn::viz {

std::string event_json(const Event& e);
std::string json_string(const std::string& s);  // quoted and escaped

}  // namespace dyn::viz
