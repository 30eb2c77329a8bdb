//! The zstd dictionaries a database stores, through a [`Bootstrap`]: read, added, and loaded
//! into the process-wide registry for the tables that use them.

use super::bootstrap::Bootstrap;
use crate::codec::DictionaryLease;
#[cfg(feature = "compression")]
use crate::error::Error;
use crate::error::Result;
#[cfg(feature = "compression")]
use crate::record::ZSTD_DICTIONARY_TABLE;
#[cfg(feature = "compression")]
use crate::table::TableFlags;

/// The zstd dictionary table.
impl Bootstrap {
    /// The zstd dictionaries this database stores for [`ZstdDict`](crate::codec::ZstdDict)
    /// tables (in the reserved table [`ZSTD_DICTIONARY_TABLE`]): every one trained, and each
    /// name's current one.
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// assert_eq!(boot.zstd_dictionaries()?.current("receipts"), None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ZstdDictionary`] when the table is damaged; [`Error::Mdbx`] when libmdbx fails.
    #[cfg(feature = "compression")]
    pub fn zstd_dictionaries(&mut self) -> Result<crate::codec::StoredDictionaries> {
        let Some(table) = self.find_any(ZSTD_DICTIONARY_TABLE)? else {
            return Ok(crate::codec::StoredDictionaries::default());
        };
        let mut entries = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let batch =
                self.read_batch(ZSTD_DICTIONARY_TABLE, table.handle, after.as_deref(), 64)?;
            let Some((last, _)) = batch.last() else {
                break;
            };
            after = Some(last.clone());
            entries.extend(batch);
        }
        crate::codec::StoredDictionaries::parse(&entries).map_err(|problem| Error::ZstdDictionary {
            path: self.path.clone(),
            message: format!(
                "the `{ZSTD_DICTIONARY_TABLE}` table is unusable: {problem}; restore the \
                     database from a backup"
            ),
        })
    }

    /// Stores `dictionary`, trained for the dictionary name `name` (e.g. with
    /// [`train_zstd_dictionary`](crate::codec::train_zstd_dictionary)), and makes it the
    /// current one of `name`; returns its ID. Dictionaries stored before stay, so values
    /// written with them keep decoding. The registry of the process sees it when the database
    /// is next published (the startup path loads the dictionaries after the migration steps).
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let samples: Vec<Vec<u8>> = (0..1000)
    ///     .map(|i| format!("{{\"id\":{i},\"status\":\"settled\"}}").into_bytes())
    ///     .collect();
    /// let dictionary = tabula_core::codec::train_zstd_dictionary(&samples, 2048)?;
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let id = boot.add_zstd_dictionary("receipts", &dictionary)?;
    /// assert_eq!(boot.zstd_dictionaries()?.current("receipts"), Some(id));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ZstdDictionary`] for a name that is not 1–64 ASCII letters, digits, `_`, `-`
    /// or `.`, bytes that are not a trained zstd dictionary, or an ID the database already
    /// stores for another dictionary (train again); [`Error::Mdbx`] when libmdbx fails (or the
    /// open is read-only).
    #[cfg(feature = "compression")]
    pub fn add_zstd_dictionary(&mut self, name: &str, dictionary: &[u8]) -> Result<u32> {
        let path = self.path.clone();
        let bad = |message: String| Error::ZstdDictionary {
            path: path.clone(),
            message,
        };
        crate::codec::check_dictionary_name(name).map_err(bad)?;
        let Some(id) = crate::codec::dictionary_id(dictionary) else {
            return Err(bad(format!(
                "the dictionary given for `{name}` ({} bytes) is not a trained zstd dictionary \
                 (it carries no dictionary ID); train it with `train_zstd_dictionary`",
                dictionary.len()
            )));
        };
        let stored = self.zstd_dictionaries()?;
        if let Some(other) = stored.name_of(id)
            && (other != name || stored.bytes(id) != Some(dictionary))
        {
            return Err(bad(format!(
                "the new dictionary for `{name}` has ID {id}, which the database already \
                 stores for another dictionary (of `{other}`); train again with other samples \
                 or another size"
            )));
        }
        let flags = TableFlags::default();
        let handle = match self.find_any(ZSTD_DICTIONARY_TABLE)? {
            Some(table) => table.handle,
            None => self.create_any(ZSTD_DICTIONARY_TABLE, flags)?,
        };
        let key = crate::codec::dictionary_key(name, id);
        self.put_raw(ZSTD_DICTIONARY_TABLE, handle, &key, dictionary, false)?;
        let key = crate::codec::dictionary_current_key(name);
        self.put_raw(
            ZSTD_DICTIONARY_TABLE,
            handle,
            &key,
            &id.to_be_bytes(),
            false,
        )?;
        tracing::info!(
            name,
            id,
            bytes = dictionary.len(),
            "stored a zstd dictionary"
        );
        Ok(id)
    }

    /// Loads this database's zstd dictionaries into the process-wide registry for the
    /// dictionary names of the schema's tables (`names`; the current ones only for a
    /// read-write open, which may encode).
    pub(super) fn lease_dictionaries(&mut self, names: &[&'static str]) -> Result<DictionaryLease> {
        #[cfg(feature = "compression")]
        {
            let stored = self.zstd_dictionaries()?;
            let names = if self.run.read_only { &[][..] } else { names };
            crate::codec::lease_dictionaries(&stored, names, &self.path).map_err(|message| {
                Error::ZstdDictionary {
                    path: self.path.clone(),
                    message,
                }
            })
        }
        #[cfg(not(feature = "compression"))]
        {
            let _ = names;
            Ok(DictionaryLease::default())
        }
    }
}
