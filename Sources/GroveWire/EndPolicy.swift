/// What becomes of a machine instance that ends, set per machine in a topology
/// (`machines[].onEnd`): it reached a terminal state, was stopped, or failed (an effect failed
/// under the `.fail` policy). docs/PROTOCOL.md ("Machine lifecycle") says exactly what each does.
public enum EndPolicy: String, Codable, Sendable, Hashable, CaseIterable {
    /// The ended instance stays: its address answers `machine-ended` until an admin restarts it
    /// (`restart`) or its worker restarts.
    case stay
    /// The instance starts again from its initial state, after a backoff that grows while it
    /// keeps ending; one that ends too often in a short time stays ended, as an OTP supervisor
    /// gives up past its restart intensity.
    case restart
    /// For keyed instances: the ended instance is dropped, with its memory and its durable
    /// record, so its key is free and the key's next event starts a new instance.
    case remove
}
