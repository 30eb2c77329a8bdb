pub struct Headers;

impl tabula::Table for Headers {
    const NAME: &'static str = "headers";
    const FLAGS: tabula::TableFlags = tabula::TableFlags::NONE;
    type Key = u64;
    type Value = Vec<u8>;
    type Codec = tabula::Raw;
    const VALUE_TYPE: &'static str = "Vec<u8>";
}

fn main() {}
