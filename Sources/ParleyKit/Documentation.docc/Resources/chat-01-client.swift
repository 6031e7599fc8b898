import Foundation
import ParleyKit

let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)
