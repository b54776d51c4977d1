import GroveCluster
package import GroveWire

/// `fsm-send`'s exit statuses: what each means and which errors end in it. The one source for
/// the code, `fsm-send --help` and the README (``summary``, which a test finds in the README).
package enum SendExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case badInput = 2
    case unreachable = 3
    case forbidden = 4
    case untrustedEndpoint = 5
    case usage = 64
    case otherError = 1

    /// What it means, as `--help` and the README say it.
    package var meaning: String {
        switch self {
        case .success:
            "success"
        case .badInput:
            "bad input (malformed JSON, unknown machine, an event that does not decode — the message names the failing path, "
                + "e.g. $.updateEmail._0 — a refused or quarantined event, an unknown dead letter, suspension or quarantined "
                + "pattern, or an endpoint ZeroMQ refuses, such as foo://bar)"
        case .unreachable:
            "the coordinator is unreachable or did not answer within --timeout"
        case .forbidden:
            "forbidden (this client's key lacks the role, or is suspended for crashing workers)"
        case .untrustedEndpoint:
            "an untrusted endpoint (a socket another user could have made, or an abstract one without CURVE keys: the message "
                + "says what to fix)"
        case .usage:
            "a usage error from the command line itself (EX_USAGE): an unknown option, a missing argument, --timeout not above "
                + "0 or above 1000000"
        case .otherError:
            "anything else (the machine ended, mailbox full, worker lost, or still unavailable when --timeout passed)"
        }
    }

    /// Every status with its meaning, in the order above: "Exit status: 0 success; 2 …".
    package static var summary: String {
        "Exit status: " + allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "; ") + "."
    }

    /// The status an error from the coordinator (or the client's own checks) ends `fsm-send` with.
    package init(_ code: WireError.Code) {
        switch code {
        case .malformedJSON, .unknownMachine, .undecodableEvent, .invalidEvent, .quarantined, .unknownDeadLetter, .unknownPoison,
             .malformedFrame, .oversized, .unknownKind, .invalidEndpoint:
            self = .badInput
        case .unreachable, .timeout:
            self = .unreachable
        case .forbidden:
            self = .forbidden
        case .untrustedEndpoint:
            self = .untrustedEndpoint
        default:
            // WireError.Code is open (a newer peer may send codes this build does not know).
            self = .otherError
        }
    }
}
