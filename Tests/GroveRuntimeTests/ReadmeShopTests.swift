// The README's worker of one's own (Writing your own worker): its machine and its test, kept
// compiling and passing here. ReadmeTests (GroveClusterTests) finds the machine in README.md,
// whose Checkout.swift imports Grove as a user's package does (public here: this target keeps
// imports internal by default).
public import Grove
import GroveRuntime
import GroveTesting
import Testing

// README shop: begin
public struct ChargeCard: IORequest, Hashable {    // runs on the payments group
    public typealias Response = String             // a receipt
    public var cents: Int
}

public enum Checkout: Machine {                    // keyed: one instance per cart
    public struct State: Equatable, Sendable, Codable { public var cents = 0, receipt: String?, error: String? }
    public enum Event: Equatable, Sendable, Codable { case add(cents: Int), pay, paid(String), declined(String) }
    public static var initialState: State { State() }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .add(let cents): state.cents += cents
        case .pay:
            return .io(id: "charge", ChargeCard(cents: state.cents)) { result in
                switch result {
                case .success(let receipt): .paid(receipt)
                case .failure(let failure): .declined(failure.message)
                }
            }
        case .paid(let receipt): state.receipt = receipt
        case .declined(let reason): state.error = reason
        }
        return .none
    }
}
// README shop: end

@Suite("README shop", .timeLimit(.minutes(2)))
struct ReadmeShopTests {
    @Test func payingChargesTheCard() async {
        var io = IOHandlers()
        io.register(ChargeCard.self) { card in "r-\(card.cents)" }
        let store = TestStore(Checkout.self, io: io)
        await store.send(.add(cents: 500)) { $0.cents = 500 }
        await store.send(.pay)
        await store.receive(.paid("r-500")) { $0.receipt = "r-500" }
        await store.finish()
    }
}

