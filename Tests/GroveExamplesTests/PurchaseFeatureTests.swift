import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("PurchaseFeature (TCA-SM, seed 004's resource validation)", .timeLimit(.minutes(2)))
struct PurchaseFeatureTests {
    typealias Feature = PurchaseFeature

    struct Declined: Error, CustomStringConvertible {
        var description: String { "card declined" }
    }

    @Test("too few points show the alert and start no IO; enough points are taken before the IO")
    func decisionInTheReducer() {
        let poor = Feature.reduceInput(Feature.State(points: 10), .purchase)
        #expect(poor == (Feature.State(points: 10, showInsufficientPointsAlert: true), nil))
        let rich = Feature.reduceInput(Feature.State(points: 30), .purchase)
        #expect(rich == (Feature.State(points: 0, isPurchasing: true), .completePurchase))
        #expect(Feature.reduceInput(Feature.State(points: 70, isPurchasing: true), .purchase) == Feature.undefined)
    }

    @Test("three purchases spend 90 of 100 points; the fourth shows the alert, which can be dismissed")
    func spendingDown() async {
        let store = TestStore(IOMachine<Feature>.self, env: .demo)
        for (left, bought) in [(70, 1), (40, 2), (10, 3)] {
            await store.send(.input(.purchase)) {
                $0.points = left
                $0.isPurchasing = true
            }
            await store.receive(.ioResult(.purchaseCompleted)) {
                $0.isPurchasing = false
                $0.purchases = bought
            }
        }
        await store.send(.input(.purchase)) { $0.showInsufficientPointsAlert = true }
        await store.send(.input(.dismissAlert)) { $0.showInsufficientPointsAlert = false }
        await store.finish()
    }

    @Test("a declined purchase gives the points back and says why")
    func declined() async {
        let store = TestStore(IOMachine<Feature>.self, env: Feature { throw Declined() })
        await store.send(.input(.purchase)) {
            $0.points = 70
            $0.isPurchasing = true
        }
        await store.receive(.ioResult(.purchaseDeclined("card declined"))) {
            $0.points = 100
            $0.isPurchasing = false
            $0.declined = "card declined"
        }
        await store.finish()
    }
}
