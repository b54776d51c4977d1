@preconcurrency import Dispatch
import Foundation
import Synchronization

/// Why fsm-launch stops.
enum StopReason: Sendable, Equatable {
    /// SIGINT or SIGTERM, or the launching process ended (counted as SIGTERM).
    case signal(Int32)
    /// A worker group gave up and its supervision escalates.
    case escalation(String)
}

/// Turns SIGINT and SIGTERM (and, when asked, the end of the launching process, or a group's
/// escalation) into something a task can await.
final class SignalWatcher: Sendable {
    private let state = Mutex<(reason: StopReason?, waiters: [CheckedContinuation<Void, Never>])>((nil, []))
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]  // only kept alive, never touched after init

    init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            source.setEventHandler { [weak self] in self?.fire(.signal(number)) }
            source.resume()
        }
    }

    /// The first reason to stop, once there is one.
    var received: StopReason? { state.withLock { $0.reason } }

    /// From now on, the launching process `parent` exiting (this process is handed to another
    /// parent) counts as SIGTERM; at once when that already happened. Checked every 250 ms: it
    /// also catches a parent killed with SIGKILL, which cannot stop its children itself.
    func watchParent(_ parent: pid_t) {
        if getppid() != parent { return fire(.signal(SIGTERM)) }
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self, self.received == nil else { return }
                if getppid() != parent {
                    self.fire(.signal(SIGTERM))
                    return
                }
            }
        }
    }

    /// A worker group gave up and escalates: stop as for a signal, then exit non-zero.
    func escalate(_ reason: String) { fire(.escalation(reason)) }

    private func fire(_ reason: StopReason) {
        let waiters = state.withLock { state in
            state.reason = state.reason ?? reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.reason != nil { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
