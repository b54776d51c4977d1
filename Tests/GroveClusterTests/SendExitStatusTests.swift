import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// fsm-send's exit statuses: one enum feeds the code, `--help` (which interpolates ``summary``)
/// and the README, which must say the same.
@Suite("SendExitStatus", .timeLimit(.minutes(2)))
struct SendExitStatusTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    static func collapsed(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test func theReadmeSaysWhatTheCodeDoes() throws {
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        #expect(Self.collapsed(readme).contains(Self.collapsed(SendExitStatus.summary)),
                "README.md's fsm-send exit statuses differ from SendExitStatus.summary; paste it in:\n\(SendExitStatus.summary)")
    }

    @Test func everyStatusIsSaidOnceWithItsNumber() {
        let summary = SendExitStatus.summary
        for status in SendExitStatus.allCases {
            #expect(summary.components(separatedBy: "\(status.rawValue) \(status.meaning)").count == 2, "\(status)")
        }
        #expect(Set(SendExitStatus.allCases.map(\.rawValue)).count == SendExitStatus.allCases.count)
    }

    @Test(arguments: [
        (WireError.Code.malformedJSON, SendExitStatus.badInput), (.quarantined, .badInput), (.unknownPoison, .badInput),
        (.timeout, .unreachable), (.unreachable, .unreachable), (.forbidden, .forbidden),
        (.untrustedEndpoint, .untrustedEndpoint), (.workerLost, .otherError), (.mailboxFull, .otherError),
        (WireError.Code(rawValue: "a-code-of-a-newer-peer"), .otherError),
    ])
    func errorsEndInTheirStatus(code: WireError.Code, status: SendExitStatus) {
        #expect(SendExitStatus(code) == status)
    }
}
