// A user's machine, written as one outside Grove writes it: it imports Grove and GroveCheck as
// products. It has one fault on purpose, which fsm-check must find (FSMCheckWorkerTests): an item
// added while the card is being charged is not handled.
import Grove
import GroveCheck

/// Charges a card; answered with a receipt.
struct ChargeCard: IORequest, Hashable {
    typealias Response = String
    var cents: Int
}

/// A cart: filled, paid once (a declined card may try again), then done.
enum Checkout: Machine {
    enum State: Equatable, Sendable, Codable, Terminable {
        case shopping(cents: Int)
        case paying(cents: Int)
        case declined(cents: Int, reason: String)
        case paid(receipt: String)

        var isTerminal: Bool {
            switch self {
            case .paid: true
            case .shopping, .paying, .declined: false
            }
        }
    }

    enum Event: Equatable, Sendable, Codable { case add(cents: Int), pay, paid(String), declined(String) }

    static var initialState: State { .shopping(cents: 0) }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch state {
        case .shopping(let cents), .declined(let cents, _):
            switch event {
            case .add(let more): state = .shopping(cents: cents + more)
            case .pay:
                state = .paying(cents: cents)
                return charge(cents)
            case .paid, .declined: return .unhandled   // a result with no charge running
            }
        case .paying(let cents):
            switch event {
            case .add: return .unhandled               // the fault: the cart changes while it is charged
            case .pay: break                           // pressed twice: the charge runs already
            case .paid(let receipt): state = .paid(receipt: receipt)
            case .declined(let reason): state = .declined(cents: cents, reason: reason)
            }
        case .paid:
            return .unhandled                          // terminal: a host refuses events here anyway
        }
        return .none
    }

    private static func charge(_ cents: Int) -> Effect {
        .io(id: "charge", ChargeCard(cents: cents)) { result in
            switch result {
            case .success(let receipt): .paid(receipt)
            case .failure(let failure): .declined(failure.message)
            }
        }
    }
}

extension Checkout: Checkable {
    typealias Checked = Checkout
    static var sampleEvents: [Event] { [.add(cents: 500), .pay, .paid("r-500"), .declined("card expired")] }
    static var declaredStates: [State] {
        [.shopping(cents: 0), .paying(cents: 0), .declined(cents: 0, reason: ""), .paid(receipt: "")]
    }
    // Every `add` makes a new cart total: the walk stops four events deep.
    static var maxDepth: Int? { 4 }
    // Pay pressed twice changes nothing, on purpose: not a pair that falls through by mistake.
    static var intendedNoOps: [String: [String]] { ["paying": ["pay"]] }
}

/// A machine the worker hosts but cannot describe: it has no `Checkable` conformance.
enum Tally: Machine {
    enum Event: Sendable, Codable { case add(Int) }
    static var initialState: Int { 0 }
    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .add(let amount): state += amount
        }
        return .none
    }
}
