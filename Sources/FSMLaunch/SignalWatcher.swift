@preconcurrency import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM (and, when asked, the end of the launching process) into something a
/// task can await.
final class SignalWatcher: Sendable {
    private let state = Mutex<(signal: Int32?, waiters: [CheckedContinuation<Void, Never>])>((nil, []))
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
            source.setEventHandler { [weak self] in self?.fire(number) }
            source.resume()
        }
    }

    var received: Int32? { state.withLock { $0.signal } }

    /// From now on, the launching process `parent` exiting (this process is handed to another
    /// parent) counts as SIGTERM; at once when that already happened. Checked every 250 ms: it
    /// also catches a parent killed with SIGKILL, which cannot stop its children itself.
    func watchParent(_ parent: pid_t) {
        if getppid() != parent { return fire(SIGTERM) }
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self, self.received == nil else { return }
                if getppid() != parent {
                    self.fire(SIGTERM)
                    return
                }
            }
        }
    }

    private func fire(_ number: Int32) {
        let waiters = state.withLock { state in
            state.signal = state.signal ?? number
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.signal != nil { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
