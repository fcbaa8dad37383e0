pub fn gravity() {}
