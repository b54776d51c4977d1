import Foundation

/// The process that started this one, watched so that this one ends with it: a worker with its
/// `fsm-launch`, an `fsm-launch` with the `fsm-load` that started it (`--exit-with-parent`).
///
/// Polled, not signalled: a parent killed with SIGKILL cannot tell its children, and Linux's
/// `PR_SET_PDEATHSIG` fires when the *thread* that spawned the child ends, which in a pool of
/// threads is any time.
package struct ParentProcess: Sendable {
    /// How often ``waitUntilGone()`` looks.
    package static let pollInterval = Duration.milliseconds(250)

    /// The parent's process id.
    package let pid: Int32

    /// - Parameter pid: The parent's pid as the parent passed it (`--parent-pid`), which also
    ///   catches a parent that ended before this process first looked; `nil` for whoever is the
    ///   parent now. Create it first thing, before anything that could take time.
    package init(pid: Int32?) {
        self.pid = pid ?? getppid()
    }

    /// Whether the parent has ended (this process was handed to another parent).
    package var isGone: Bool { getppid() != pid }

    /// Returns once the parent is gone, or the task is cancelled.
    package func waitUntilGone() async {
        while !Task.isCancelled, !isGone {
            try? await Task.sleep(for: Self.pollInterval)
        }
    }
}
