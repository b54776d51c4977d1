import Synchronization

/// Collects values from any thread; tests await a condition on them with a deadline.
final class Recorder<Element: Sendable>: Sendable {
    private typealias Waiter = (predicate: @Sendable ([Element]) -> Bool, continuation: CheckedContinuation<Bool, Never>)

    private struct State {
        var items: [Element] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    var items: [Element] { state.withLock { $0.items } }

    func append(_ item: Element) { append(contentsOf: [item]) }

    func append(contentsOf items: [Element]) {
        let satisfied = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.items.append(contentsOf: items)
            let ready = state.waiters.filter { $0.value.predicate(state.items) }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        for continuation in satisfied { continuation.resume(returning: true) }
    }

    /// Waits until `predicate` holds for the items recorded so far; `false` when `timeout` passes first.
    func wait(
        within timeout: Duration = .seconds(10), until predicate: @escaping @Sendable ([Element]) -> Bool
    ) async -> Bool {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if predicate(state.items) { return true }
                state.waiters[id] = (predicate, continuation)
                return false
            }
            if now { continuation.resume(returning: true) }
        }
    }

    /// Waits until at least `count` items were recorded.
    func wait(forCount count: Int, within timeout: Duration = .seconds(10)) async -> Bool {
        await wait(within: timeout) { $0.count >= count }
    }
}
