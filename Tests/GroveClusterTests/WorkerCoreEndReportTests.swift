@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// What becomes of the report of an instance's end whose final state is larger than the
/// coordinator's frames: ``WorkerCore/endReport(_:encodedBytes:messageBytes:)``, fed sizes, with no
/// host, socket or clock.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCoreEndReportTests {
    let ended = MachineEnded(address: "cart/a", worker: "w", reason: .terminalState, state: .object(["items": .array([])]))

    /// The limit at which a report of `bytes` just fits.
    func limit(fitting bytes: Int) -> Int { OutboundLimit.envelopeBytes(address: ended.address.utf8.count, payload: bytes) }

    @Test func aReportThatFitsLeavesAsItIs() {
        #expect(WorkerCore.endReport(ended, encodedBytes: 100, messageBytes: limit(fitting: 100)) == ended)
    }

    @Test func aFinalStateOverTheLimitIsLeftOutSayingWhy() {
        let report = WorkerCore.endReport(ended, encodedBytes: 101, messageBytes: limit(fitting: 100))
        #expect(report.state == .null, "the end arrives, without its state")
        #expect(report.address == ended.address && report.worker == ended.worker && report.reason == ended.reason)
        let message = report.message ?? ""
        #expect(message.contains("the final state is about 101 bytes encoded, over limits.messageBytes \(limit(fitting: 100))"), "\(message)")
        #expect(message.contains("raise it in the topology or keep the state smaller"), "\(message)")
    }

    @Test func aReportThatDoesNotEncodeLeavesAsItIs() {
        #expect(WorkerCore.endReport(ended, encodedBytes: nil, messageBytes: 1) == ended)
    }
}
