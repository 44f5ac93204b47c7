//! A `.safetensors` file read whole: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the bytes. Only what a model of ours
//! needs (f32 tensors) is taken; a truncated file, a range outside it or a shape that does not
//! match its bytes is an error that says which, never a panic.

use std::collections::HashMap;

use serde_json::Value;

/// The largest header taken (the format caps it at 100 MB; ours are a few KB).
const MAX_HEADER: u64 = 16 * 1024 * 1024;

#[derive(Debug)]
pub struct Tensors {
    map: HashMap<String, (Vec<usize>, Vec<f32>)>,
}

impl Tensors {
    pub fn parse(bytes: &[u8]) -> Result<Tensors, String> {
        let len = bytes
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or("the weights file is shorter than its header")?;
        if len > MAX_HEADER || 8 + len > bytes.len() as u64 {
            return Err("the weights file's header is cut short or damaged".into());
        }
        let header: Value = serde_json::from_slice(&bytes[8..8 + len as usize])
            .map_err(|e| format!("the weights file's header is not JSON: {e}"))?;
        let data = &bytes[8 + len as usize..];
        let mut map = HashMap::new();
        for (name, t) in header.as_object().ok_or("the header is not an object")? {
            if name == "__metadata__" || t["dtype"] != "F32" {
                continue;
            }
            let shape: Vec<usize> = t["shape"]
                .as_array()
                .ok_or_else(|| format!("{name} has no shape"))?
                .iter()
                .map(|d| d.as_u64().map(|d| d as usize))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("{name}'s shape is not numbers"))?;
            let (Some(start), Some(end)) = (
                t["data_offsets"][0].as_u64().map(|v| v as usize),
                t["data_offsets"][1].as_u64().map(|v| v as usize),
            ) else {
                return Err(format!("{name} has no byte range"));
            };
            let count: usize = shape.iter().product();
            if start > end || end > data.len() {
                return Err(format!("{name} lies past the end of the file (truncated?)"));
            }
            if end - start != count * 4 {
                return Err(format!("{name}'s bytes do not match its shape {shape:?}"));
            }
            let values = data[start..end]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            map.insert(name.clone(), (shape, values));
        }
        Ok(Tensors { map })
    }

    /// Tensor `name`, which must have `shape`.
    pub fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let (have, values) = self
            .map
            .remove(name)
            .ok_or_else(|| format!("the model has no {name}"))?;
        if have != shape {
            return Err(format!("{name} is {have:?}, not {shape:?}"));
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn tensors_are_read_and_damage_is_named() {
        let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        let good = file(
            r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            &data,
        );
        let mut t = Tensors::parse(&good).unwrap();
        assert_eq!(t.take("w", &[2]).unwrap(), [1.0, 2.0]);
        assert!(t.take("w", &[2]).unwrap_err().contains("no w"));
        let mut t = Tensors::parse(&good).unwrap();
        assert!(t.take("w", &[1, 2]).unwrap_err().contains("not [1, 2]"));
        assert!(
            Tensors::parse(&good[..good.len() - 1])
                .unwrap_err()
                .contains("truncated")
        );
        assert!(Tensors::parse(&good[..5]).is_err());
        assert!(
            Tensors::parse(&file("{nope", &[]))
                .unwrap_err()
                .contains("not JSON")
        );
        let wrong = file(
            r#"{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
            &data,
        );
        assert!(Tensors::parse(&wrong).unwrap_err().contains("do not match"));
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(Tensors::parse(&huge).is_err());
    }
}
