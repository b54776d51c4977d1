public import Grove

extension MachineHost {
    /// The current state followed by every state committed from now on; finishes when the
    /// machine ends.
    public func states() -> AsyncStream<M.State> {
        let (stream, continuation) = AsyncStream.makeStream(of: M.State.self)
        continuation.yield(_state)
        guard isRunning else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        stateObservers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            guard let host = self else { return }
            Task { await host.removeStateObserver(id) }
        }
        return stream
    }

    /// Every output emitted from now on; finishes when the machine ends.
    public func outputs() -> AsyncStream<M.Output> {
        let (stream, continuation) = AsyncStream.makeStream(of: M.Output.self)
        guard isRunning else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        outputObservers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            guard let host = self else { return }
            Task { await host.removeOutputObserver(id) }
        }
        return stream
    }

    /// Waits for the first state, from the current one on, that satisfies `condition`.
    ///
    /// ```swift
    /// let loaded = await host.firstState(within: .seconds(2)) { if case .loaded = $0 { true } else { false } }
    /// ```
    /// - Parameters:
    ///   - timeout: How long to wait.
    ///   - condition: What the state must satisfy.
    /// - Returns: The state, or `nil` when the deadline passed or the machine ended first.
    public func firstState(
        within timeout: Duration,
        where condition: @escaping @Sendable (M.State) -> Bool
    ) async -> M.State? {
        let states = states()
        return await withTaskGroup(of: M.State?.self) { group in
            group.addTask {
                for await state in states where condition(state) { return state }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    func removeStateObserver(_ id: Int) { stateObservers[id] = nil }
    func removeOutputObserver(_ id: Int) { outputObservers[id] = nil }
}
