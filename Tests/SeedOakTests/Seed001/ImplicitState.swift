// Seed 001, Oak's "Understanding Finite State Machines": "The Problem with Implicit State", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.

class ViewController {
    var isLoading = false
    var hasError = false
    var data: [Item]?
    var errorMessage: String?
    
    func loadData() {
        // What if isLoading is already true?
        // What if hasError is true but errorMessage is nil?
        // How many total states are possible here?
    }
}
