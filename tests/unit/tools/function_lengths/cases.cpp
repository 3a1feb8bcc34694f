// Every shape the checker must read; expected.txt lists what it finds.
#include <string>
#define BRACE_MACRO(x) { x }
extern "C" {
int c_entry(int a) {
  return a;
}
}
namespace outer::inner {
enum class Colour { red, green };
constexpr int kTable[] = {1, 2, 3};
const auto kSquare = [](int x) {
  return x * x;
};
struct Widget : Base {
 public:
  Widget() : a_{1}, b_(2), c_{f({3})} {
    touch();
  }
  int size() const noexcept { return a_; }
  struct Hash {
    std::size_t operator()(int v) const { return v; }
  };
  bool operator==(const Widget& o) const = default;
 private:
  int a_{0};
};
template <typename T>
auto twice(T v) -> decltype(v + v) {
  return v + v;
}
}  // namespace outer::inner
int Widget::body(const char* s = "{") {
  const char open = '{';
  const std::string raw = R"x(} ) " {)x";
  /* } */ // {
  auto inner = [&] { return open; };
  return 1'000 + inner();
}
