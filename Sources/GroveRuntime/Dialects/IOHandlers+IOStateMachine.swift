public import Grove

extension IOHandlers {
    /// Serves a ``RemoteIOStateMachine``'s IO effects with `feature`'s `runIOEffect`, on the
    /// worker a topology places its requests on. A `nil` result reaches the machine as
    /// `ioFailed(_:_:)` with the code `handlerFailed`.
    /// - Parameter feature: The instance whose dependencies perform the IO.
    public mutating func register<F: RemoteIOStateMachine>(feature: F) {
        register(F.IOEffect.self) { effect in
            guard let result = await feature.runIOEffect(effect) else { throw NoIOResult(request: F.IOEffect.name) }
            return result
        }
    }
}

/// `runIOEffect` returned `nil` for a request served by ``IOHandlers/register(feature:)``.
struct NoIOResult: Error, CustomStringConvertible {
    var request: String
    var description: String { "runIOEffect returned no result for '\(request)'" }
}
