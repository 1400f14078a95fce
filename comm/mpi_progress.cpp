#include "comm/mpi_progress.h"

#include <thread>

#include "comm/mpi_check.h"

namespace zt {

// Every MPI collective of the MPI backend ends here. A blocking MPI call (MPI_Allreduce, MPI_Wait)
// busy-polls in Open MPI until the peers have answered, so on a rank with one core the comm thread
// would take the CPU from the compute thread for the whole transfer and overlap would hide almost
// nothing. Testing and then sleeping leaves the core to compute. The sleep cannot be long: Open
// MPI's TCP transport and its non-blocking collective schedules only progress inside MPI calls, so
// between two tests the transfer moves at most what the socket buffers hold.
void complete_polling(MPI_Request& request, std::chrono::microseconds poll_interval) {
  for (;;) {
    int done = 0;
    ZT_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    if (poll_interval.count() > 0) std::this_thread::sleep_for(poll_interval);
  }
}

}  // namespace zt
