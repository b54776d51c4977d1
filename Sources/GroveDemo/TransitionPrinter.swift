import Grove
import GroveRuntime

/// Prints every transition of a host as one line: machine, event, where it came from, new state.
enum TransitionPrinter {
    static func options<M: Machine>(_ address: String, for _: M.Type = M.self) -> HostOptions<M> {
        HostOptions(
            address: address,
            diagnostics: { diagnostic in
                switch diagnostic {
                case .unhandled(_, let event): line(address, "ignored", "\(event)", "(no transition in this state)")
                case .eventsDropped(let events, let reason):
                    line(address, "dropped", "\(events.count) event(s)", "(\(reason.code.rawValue))")
                case .effectFailed(let id, let error): line(address, "failed", "effect \(id)", "\(error)")
                case .mailboxOverflow, .effectsSkippedAtTermination, .reissueNotKept, .postponeIgnored: break
                }
            },
            trace: { trace in
                switch trace {
                case .processed(let event, let origin, let state):
                    line(address, "\(origin)", "\(event)", "→ \(state)")
                case .output(let output):
                    line(address, "output", "\(output)", "")
                case .resultDiscarded(let id):
                    line(address, "discarded", "late result of \(id)", "(its work was cancelled or replaced)")
                case .unhandled, .workEnded, .workFailed:
                    // A failure is printed from the diagnostic above.
                    break
                }
            }
        )
    }

    static func line(_ address: String, _ origin: String, _ event: String, _ result: String) {
        print("\(pad(address, 8)) \(pad(origin, 20)) \(pad(tidy(event), 34)) \(tidy(result))")
    }

    /// Drops module and type qualifiers (`GroveExamples.AuthFlow.Step.locked` → `locked`) and
    /// `Optional(...)` wrappers, so a line shows values, not type paths.
    static func tidy(_ text: String) -> String {
        text.replacing("GroveExamples.", with: "")
            .replacing(#/\b(?:[A-Z][A-Za-z]*\.)+(?=[a-z])/#, with: "")
            .replacing(#/Optional\(([^()]*)\)/#) { $0.output.1 }
    }

    static func heading(_ text: String) {
        print("\n── \(text) " + String(repeating: "─", count: max(0, 76 - text.count)))
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

/// Waits until the host commits a state that satisfies `condition`.
/// - Throws: ``DemoError`` when it does not happen within `timeout`.
func awaitState<M: Machine>(
    _ host: MachineHost<M>,
    _ description: String,
    within timeout: Duration = .seconds(5),
    where condition: @escaping @Sendable (M.State) -> Bool
) async throws {
    guard await host.firstState(within: timeout, where: condition) != nil else {
        throw DemoError("\(host.address) did not reach \(description) within \(timeout)")
    }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
