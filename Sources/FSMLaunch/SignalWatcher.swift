@preconcurrency import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM into something a task can await.
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
