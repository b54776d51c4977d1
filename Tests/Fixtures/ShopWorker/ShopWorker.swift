import GroveWorker

/// A worker of the user's own, as README's "Writing your own worker" builds one, whose
/// `Checkout` fsm-check can describe: `ShopWorker --describe Checkout`.
@main enum ShopWorker {
    static func main() async {
        var worker = WorkerConfiguration()
        worker.register(Checkout.self)
        worker.checkable(Checkout.self)     // fsm-check --worker ShopWorker Checkout
        worker.register(Tally.self)         // hosted, not describable
        worker.io.register(ChargeCard.self) { card in "r-\(card.cents)" }
        await Worker.main(worker)
    }
}
