// The pool of reusable handles behind CUDA events: handles are reused rather than created anew, and
// handles given back from other threads are all kept.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "core/handle_pool.h"

namespace zt {
namespace {

TEST(HandlePool, ReusesWhatWasGivenBack) {
  int created = 0;
  HandlePool<int> pool([&] { return ++created; });
  const int a = pool.take(), b = pool.take();
  EXPECT_EQ(created, 2);
  pool.give(a);
  pool.give(b);
  EXPECT_EQ(pool.idle(), 2u);
  const std::set<int> again{pool.take(), pool.take()};
  EXPECT_EQ(again, (std::set<int>{a, b}));
  EXPECT_EQ(created, 2) << "a handle in the pool was created anew";
  pool.take();
  EXPECT_EQ(created, 3);
}

TEST(HandlePool, HandlesComeBackFromOtherThreads) {
  std::atomic<int> created = 0;
  HandlePool<int> pool([&] { return ++created; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) pool.give(pool.take());
    });
  for (std::thread& thread : threads) thread.join();
  // At most one handle per thread was ever in use at once, and every one came back.
  EXPECT_LE(created.load(), 4);
  EXPECT_EQ(pool.idle(), static_cast<std::size_t>(created.load()));
}

}  // namespace
}  // namespace zt
