// Completion of a non-blocking MPI collective on the comm thread without taking the CPU from the
// rank's compute thread.
#pragma once

#include <mpi.h>

#include <chrono>
#include <span>

namespace zt {

// Returns when `request` (a started MPI_I* collective) has completed; throws zt::CallError with
// MPI's error string when it failed. poll_interval: the sleep between two tests while no thread
// waits for a collective (threads_waiting_for_collectives(), work.h; otherwise the thread yields
// between tests); 0 spins.
void complete_polling(MPI_Request& request, std::chrono::microseconds poll_interval);
// The same for several requests (a point-to-point exchange): returns when all have completed.
void complete_polling(std::span<MPI_Request> requests, std::chrono::microseconds poll_interval);

}  // namespace zt
