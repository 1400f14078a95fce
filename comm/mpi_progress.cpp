#include "comm/mpi_progress.h"

#include <thread>

#include "comm/mpi_check.h"
#include "comm/work.h"

namespace zt {

// Every MPI collective of the MPI backend ends here. A blocking MPI call (MPI_Allreduce, MPI_Wait)
// busy-polls in Open MPI until the peers have answered, so on a rank with one core the comm thread
// would take the CPU from the compute thread for the whole transfer and overlap would hide almost
// nothing. Testing and then sleeping leaves the core to compute. The sleep cannot be long: Open
// MPI's TCP transport and its non-blocking collective schedules only progress inside MPI calls, so
// between two tests the transfer moves at most what the socket buffers hold. So while a thread of
// the rank blocks in Work::wait (the end of backward, a forward waiting for its parameters) there
// is no compute to leave the core to: the thread tests back to back, yielding in between rather
// than sleeping, so that a rank sharing the core (more ranks than cores) still gets to run.
void complete_polling(MPI_Request& request, std::chrono::microseconds poll_interval) {
  complete_polling(std::span<MPI_Request>(&request, 1), poll_interval);
}

void complete_polling(std::span<MPI_Request> requests, std::chrono::microseconds poll_interval) {
  for (;;) {
    int done = 0;
    ZT_MPI_CHECK(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE));
    if (done) return;
    if (poll_interval.count() == 0) continue;
    if (threads_waiting_for_collectives() > 0)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(poll_interval);
  }
}

}  // namespace zt
