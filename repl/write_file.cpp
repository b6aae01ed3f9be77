// Writing a whole file the user named, with the reason when it fails.
#include "repl/write_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "repl/text.h"

namespace dyn::repl {

std::string write_failure(const std::string& path, int err) {
  std::string reason = std::strerror(err);
  switch (err) {
    case ENOENT: {
      if (path.empty()) return "the file name is empty; name a file";
      size_t slash = path.rfind('/');
      std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
      return reason + "; create the folder '" + shown(dir, kPathChars) + "' first, or choose another path";
    }
    case EISDIR:
      return reason + "; name a file, not a folder";
    case ENOTDIR:
      return reason + "; a part of the path before the file name is not a folder";
    case EACCES:
    case EPERM:
    case EROFS:
      return reason + "; choose a path you may write to";
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return reason + "; free some space, or write somewhere else";
    default:
      return reason + "; choose another path";
  }
}

std::string refused_target(const std::string& path) {
  auto ends_with = [&](std::string_view tail) {
    if (path.size() < tail.size()) return false;
    for (size_t i = 0; i < tail.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - tail.size() + i])) != tail[i]) return false;
    return true;
  };
  if (!ends_with(".py") && !ends_with(".pyw")) return "";
  return "'" + shown(path, kPathChars) + "' is a Python script, and writing there would replace it; name another file";
}

std::string write_file(const std::string& path, const std::string& data) {
  if (std::string refused = refused_target(path); !refused.empty()) return refused;
  // Plain file descriptors: each call's errno is read right after it fails, and close() reports
  // the errors that a buffered stream would only meet when flushing (a full disk, /dev/full).
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return write_failure(path, errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;  // a write of nothing: the device took no more
      ::close(fd);
      return write_failure(path, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && errno != EINTR) return write_failure(path, errno);
  return {};
}

}  // namespace dyn::repl
