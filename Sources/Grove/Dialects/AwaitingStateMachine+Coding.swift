// How an awaiting machine's steps cross processes and reach records. A program's
// event is written as itself, so clients send the program's JSON unchanged; the machine's own
// steps are written under `$`-keys that no synthesized Codable event uses.

extension AwaitingStep: Equatable where S: Equatable, E: Equatable {
    /// Results compare by run, event, new state and whether they ask for a side effect (which is
    /// code, and has no equality).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.event(let left), .event(let right)):
            left == right
        case (.transitioned(let left, let leftEvent, let leftRun), .transitioned(let right, let rightEvent, let rightRun)):
            leftRun == rightRun && leftEvent == rightEvent && Result(left) == Result(right)
        case (.restarted, .restarted):
            true
        case (.event, _), (.transitioned, _), (.restarted, _):
            false
        }
    }
}

extension AwaitingStep: Codable where S: Codable, E: Codable {
    enum StepKey: String, CodingKey {
        case transitioned = "$transitioned", restarted = "$restarted"
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .event(let event):
            try event.encode(to: encoder)
        case .transitioned(let transition, let event, let run):
            var container = encoder.container(keyedBy: StepKey.self)
            try container.encode(Transitioned(run: run, event: event, result: Result(transition)), forKey: .transitioned)
        case .restarted:
            var container = encoder.container(keyedBy: StepKey.self)
            try container.encode(true, forKey: .restarted)
        }
    }

    /// A result read back (from a journal being replayed, or a record) has no side effect: its
    /// work is code. One that asked for one gets a side effect that does nothing, so that it
    /// stays handled; a replay runs no effect anyway, and a restored result is superseded by
    /// the run that the restore starts.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: StepKey.self) {
            if container.contains(.restarted) {
                self = .restarted
                return
            }
            if container.contains(.transitioned) {
                let result = try container.decode(Transitioned.self, forKey: .transitioned)
                let output = result.result.sideEffect ? SideEffect<S, E> { nil } : nil
                let transition: StateMachine<S, E>.Transition = switch result.result.state {
                case .some(let next): .newState(next, output: output)
                case .none: .sameState(output: output)
                }
                self = .transitioned(transition, event: result.event, run: result.run)
                return
            }
        }
        self = .event(try E(from: decoder))
    }

    struct Transitioned: Codable {
        var run: Int
        var event: E
        var result: Result
    }
}

extension AwaitingStep {
    /// What of a transition can be written down: the new state, if any, and whether it asked
    /// for a side effect.
    struct Result {
        var state: S?
        var sideEffect: Bool

        init(_ transition: StateMachine<S, E>.Transition) {
            switch transition {
            case .sameState(let output): state = nil; sideEffect = output != nil
            case .newState(let next, let output): state = next; sideEffect = output != nil
            }
        }
    }
}

extension AwaitingStep.Result: Equatable where S: Equatable {}
extension AwaitingStep.Result: Codable where S: Codable {}
