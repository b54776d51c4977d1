public import Grove

extension MachineHost {
    /// The current state followed by every state committed from now on; finishes when the
    /// machine ends.
    public func states() -> AsyncStream<M.State> {
        let (stream, continuation) = AsyncStream.makeStream(of: M.State.self)
        continuation.yield(_state)
        guard outcome == nil else {
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
        guard outcome == nil else {
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

    func removeStateObserver(_ id: Int) { stateObservers[id] = nil }
    func removeOutputObserver(_ id: Int) { outputObservers[id] = nil }
}
