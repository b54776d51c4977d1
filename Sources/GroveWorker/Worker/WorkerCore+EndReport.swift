@_spi(GroveInternal) import GroveWire

extension WorkerCore {
    /// The `machine` message that reports an instance's end, as it may leave. The coordinator
    /// refuses a frame over its `limits.messageBytes`, and the end must still arrive (watchers,
    /// an admin's `restart` and `onEnd` wait for it): one whose final state makes it larger goes
    /// without the state (`null`), its message saying how large the state was and what to do.
    /// Pure: the host measures the report and sends what this returns (`Hosted+Start.swift`).
    /// - Parameters:
    ///   - ended: The report as the host made it.
    ///   - encodedBytes: `ended` encoded as JSON, in bytes; nil when it does not encode (it is
    ///     sent as it is, and its encoding fails where it is sent, as before).
    ///   - messageBytes: The largest frame the coordinator accepts (the last welcome's).
    static func endReport(_ ended: MachineEnded, encodedBytes: Int?, messageBytes: Int) -> MachineEnded {
        guard let encodedBytes,
              OutboundLimit.envelopeBytes(address: ended.address.utf8.count, payload: encodedBytes) > messageBytes else { return ended }
        var report = ended
        report.state = .null
        report.message = "the final state is about \(encodedBytes) bytes encoded, over limits.messageBytes \(messageBytes); "
            + "raise it in the topology or keep the state smaller"
        return report
    }
}
